(* TCSExam theorem task theorem-cantor-diagonal: no sequence of infinite binary sequences lists them all (Cantor's diagonal argument).
   A proof starts with `From TCSExam Require Import Task.` and proves `cantor_diagonal : statement`. *)
Definition statement : Prop :=
  forall f : nat -> (nat -> bool), exists g : nat -> bool, forall n : nat, f n <> g.
