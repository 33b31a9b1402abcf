From TCSExam Require Import Task.
Theorem cantor_diagonal : statement.
Proof.
  intro f. exists (fun n => negb (f n n)). intros n E.
  assert (D := f_equal (fun h => h n) E). simpl in D.
  destruct (f n n); discriminate D.
Qed.
