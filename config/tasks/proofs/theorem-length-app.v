(* TCSExam theorem task theorem-length-app: the length of a concatenation is the sum of the lengths.
   A proof starts with `From TCSExam Require Import Task.` and proves `length_app : statement`. *)
Require Import Coq.Lists.List.

Definition statement : Prop :=
  forall (A : Type) (l1 l2 : list A), length (l1 ++ l2) = length l1 + length l2.
