(* TCSExam open-conjecture task conjecture-rev-app-distributes: prove or refute: rev (l1 ++ l2) = rev l1 ++ rev l2 for lists of naturals (false: the order flips).
   A resolution starts with `From TCSExam Require Import Task.` and proves either
   `proof : statement` or `refutation : negation`. *)
Require Import Coq.Lists.List.

Definition statement : Prop := forall l1 l2 : list nat, rev (l1 ++ l2) = rev l1 ++ rev l2.
Definition negation : Prop := ~ statement.
