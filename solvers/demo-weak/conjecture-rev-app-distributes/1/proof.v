From TCSExam Require Import Task.
(* demo-weak: tries to prove the false side: does not compile *)
Theorem proof : statement.
Proof.
  intros l1 l2. induction l1; simpl; reflexivity.
Qed.
