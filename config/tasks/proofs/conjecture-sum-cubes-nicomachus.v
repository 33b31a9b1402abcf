(* TCSExam open-conjecture task conjecture-sum-cubes-nicomachus: prove or refute: 4 (1^3 + ... + n^3) = (n(n+1))^2 (true: Nicomachus).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Fixpoint sum_cubes (n : nat) : nat :=
  match n with
  | O => O
  | S k => sum_cubes k + S k * S k * S k
  end.

Definition statement : Prop := forall n : nat, 4 * sum_cubes n = (n * (n + 1)) * (n * (n + 1)).
Definition negation : Prop := ~ statement.
