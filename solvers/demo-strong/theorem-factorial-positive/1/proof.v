From TCSExam Require Import Task.
Require Import Lia.

(* demo-strong: the step lemma is left admitted, so the theorem rests on an axiom: incomplete *)
Lemma step : forall n m : nat, 1 <= m -> 1 <= S n * m.
Proof.
Admitted.

Theorem factorial_positive : statement.
Proof.
  intro n. induction n as [|n IH]; simpl; [lia|].
  apply (step n). exact IH.
Qed.
