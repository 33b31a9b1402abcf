From TCSExam Require Import Task.
(* demo-weak: gives up *)
Theorem cantor_diagonal : statement.
Proof.
Admitted.
