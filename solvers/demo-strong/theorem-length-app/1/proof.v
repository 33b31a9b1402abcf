From TCSExam Require Import Task.
Theorem length_app : statement.
Proof.
  intros A l1 l2. induction l1 as [|x l1 IH]; simpl; [reflexivity|].
  rewrite IH. reflexivity.
Qed.
