From TCSExam Require Import Task.
Require Import Coq.Lists.List.

Lemma rev_app : forall (A : Type) (l1 l2 : list A), rev (l1 ++ l2) = rev l2 ++ rev l1.
Proof.
  intros A l1 l2. induction l1 as [|x l1 IH]; simpl.
  - rewrite app_nil_r. reflexivity.
  - rewrite IH, app_assoc. reflexivity.
Qed.

Theorem rev_involutive : statement.
Proof.
  intros A l. induction l as [|x l IH]; simpl; [reflexivity|].
  rewrite rev_app, IH. reflexivity.
Qed.
