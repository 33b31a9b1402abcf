From TCSExam Require Import Task.
(* demo-fast: no proof found within its budget *)
Theorem cantor_diagonal : statement.
Proof.
Admitted.
