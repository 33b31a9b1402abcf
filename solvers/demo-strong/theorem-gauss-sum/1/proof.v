From TCSExam Require Import Task.
Require Import Arith Lia.

Theorem gauss_sum : statement.
Proof.
  intro n. induction n as [|n IH]; simpl sum_to; [reflexivity|].
  rewrite Nat.mul_add_distr_l, IH. lia.
Qed.
