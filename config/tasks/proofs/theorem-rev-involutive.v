(* TCSExam theorem task theorem-rev-involutive: reversing a list twice gives the list back.
   A proof starts with `From TCSExam Require Import Task.` and proves `rev_involutive : statement`. *)
Require Import Coq.Lists.List.

Definition statement : Prop := forall (A : Type) (l : list A), rev (rev l) = l.
