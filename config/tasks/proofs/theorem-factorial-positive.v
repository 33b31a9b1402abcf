(* TCSExam theorem task theorem-factorial-positive: n! >= 1 for every n.
   A proof starts with `From TCSExam Require Import Task.` and proves `factorial_positive : statement`. *)
Fixpoint factorial (n : nat) : nat :=
  match n with
  | O => 1
  | S k => S k * factorial k
  end.

Definition statement : Prop := forall n : nat, 1 <= factorial n.
