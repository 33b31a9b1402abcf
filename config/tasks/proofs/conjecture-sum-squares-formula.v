(* TCSExam open-conjecture task conjecture-sum-squares-formula: prove or refute: 6 (1^2 + ... + n^2) = n(n+1)(2n+1) (true).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Fixpoint sum_squares (n : nat) : nat :=
  match n with
  | O => O
  | S k => sum_squares k + S k * S k
  end.

Definition statement : Prop := forall n : nat, 6 * sum_squares n = n * (n + 1) * (2 * n + 1).
Definition negation : Prop := ~ statement.
