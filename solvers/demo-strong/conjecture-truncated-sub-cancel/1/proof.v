From TCSExam Require Import Task.
Theorem refutation : negation.
Proof. intro H. specialize (H 0 1). discriminate H. Qed.
