(* TCSExam open-conjecture task conjecture-fermat-numbers-prime: prove or refute: every Fermat number 2^(2^n) + 1 is prime (false: Euler 1732, 641 divides 2^32 + 1).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Require Import Coq.NArith.NArith.
Open Scope N_scope.

Definition prime (p : N) : Prop :=
  2 <= p /\ forall d : N, (d | p) -> d = 1 \/ d = p.

Definition statement : Prop := forall n : N, prime (2 ^ (2 ^ n) + 1).
Definition negation : Prop := ~ statement.
