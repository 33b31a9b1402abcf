(* TCSExam theorem task theorem-even-or-odd: every natural number is even or odd.
   A proof starts with `From TCSExam Require Import Task.` and proves `even_or_odd : statement`. *)
Definition statement : Prop := forall n : nat, exists k : nat, n = 2 * k \/ n = 2 * k + 1.
