From TCSExam Require Import Task.
Require Import Lia.

Theorem factorial_positive : statement.
Proof.
  intro n. induction n as [|n IH]; simpl; lia.
Qed.
