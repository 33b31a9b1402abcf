From TCSExam Require Import Task.
Require Import Arith.

Theorem binomial_square : statement.
Proof. intros a b. ring. Qed.
