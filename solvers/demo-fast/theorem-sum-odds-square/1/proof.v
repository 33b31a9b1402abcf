From TCSExam Require Import Task.
Require Import Lia.

Theorem sum_odds_square : statement.
Proof.
  intro n. induction n as [|n IH]; simpl; [reflexivity|].
  rewrite IH. lia.
Qed.
