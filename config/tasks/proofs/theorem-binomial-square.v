(* TCSExam theorem task theorem-binomial-square: (a + b)^2 = a^2 + 2ab + b^2 over the natural numbers.
   A proof starts with `From TCSExam Require Import Task.` and proves `binomial_square : statement`. *)
Definition statement : Prop :=
  forall a b : nat, (a + b) * (a + b) = a * a + 2 * a * b + b * b.
