From TCSExam Require Import Task.
Require Import Arith Lia.

(* demo-strong: the induction step is assumed, not proved: incomplete *)
Axiom doubling_step : forall n : nat, 5 <= n -> n * n < 2 ^ n -> S n * S n < 2 ^ S n.

Theorem proof : statement.
Proof.
  intros n Hn. induction n as [|n IH]; [lia|].
  destruct (Nat.eq_dec n 4) as [->|Ne]; [simpl; lia|].
  apply doubling_step; [lia|]. apply IH. lia.
Qed.
