From TCSExam Require Import Task.
(* demo-weak: gives up *)
Theorem binomial_square : statement.
Proof.
Admitted.
