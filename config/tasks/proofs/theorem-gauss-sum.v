(* TCSExam theorem task theorem-gauss-sum: twice the sum 1 + ... + n is n(n+1) (Gauss).
   A proof starts with `From TCSExam Require Import Task.` and proves `gauss_sum : statement`. *)
Fixpoint sum_to (n : nat) : nat :=
  match n with
  | O => O
  | S k => sum_to k + S k
  end.

Definition statement : Prop := forall n : nat, 2 * sum_to n = n * (n + 1).
