(* TCSExam open-conjecture task conjecture-square-below-pow2: prove or refute: n^2 < 2^n for every n >= 5 (true).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Require Import Coq.Arith.PeanoNat.

Definition statement : Prop := forall n : nat, 5 <= n -> n * n < 2 ^ n.
Definition negation : Prop := ~ statement.
