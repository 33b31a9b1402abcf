(* TCSExam open-conjecture task conjecture-truncated-sub-cancel: prove or refute: a - b + b = a for all naturals (false under truncated subtraction: a = 0, b = 1).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Definition statement : Prop := forall a b : nat, a - b + b = a.
Definition negation : Prop := ~ statement.
