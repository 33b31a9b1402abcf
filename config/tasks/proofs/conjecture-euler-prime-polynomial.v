(* TCSExam open-conjecture task conjecture-euler-prime-polynomial: prove or refute: n^2 + n + 41 is prime for every natural n (false: n = 40 gives 41^2; Euler 1772).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Require Import Coq.Arith.PeanoNat.

Definition prime (p : nat) : Prop :=
  2 <= p /\ forall d : nat, Nat.divide d p -> d = 1 \/ d = p.

Definition statement : Prop := forall n : nat, prime (n * n + n + 41).
Definition negation : Prop := ~ statement.
