From TCSExam Require Import Task.
Require Import Lia.

(* demo-weak: a wrong statement (the sum bounded, not equal) under the task's name *)
Theorem sum_odds_square : forall n : nat, sum_odds n <= n * n + n.
Proof.
  intro n. induction n as [|n IH]; simpl; lia.
Qed.
