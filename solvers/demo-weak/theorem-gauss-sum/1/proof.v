From TCSExam Require Import Task.
Require Import Coq.NArith.NArith.

(* demo-weak: computes before it proves, far beyond the time limit: timeout *)
Eval vm_compute in (N.iter 1000000000000000%N negb true).

Theorem gauss_sum : statement.
Proof.
Admitted.
