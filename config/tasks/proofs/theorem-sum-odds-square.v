(* TCSExam theorem task theorem-sum-odds-square: the sum of the first n odd numbers is n^2.
   A proof starts with `From TCSExam Require Import Task.` and proves `sum_odds_square : statement`. *)
Fixpoint sum_odds (n : nat) : nat :=
  match n with
  | O => O
  | S k => sum_odds k + (2 * k + 1)
  end.

Definition statement : Prop := forall n : nat, sum_odds n = n * n.
