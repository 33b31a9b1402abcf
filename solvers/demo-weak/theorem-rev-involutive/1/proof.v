From TCSExam Require Import Task.
(* demo-weak: gives up *)
Theorem rev_involutive : statement.
Proof.
Admitted.
