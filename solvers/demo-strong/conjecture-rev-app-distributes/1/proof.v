From TCSExam Require Import Task.
Require Import Coq.Lists.List.
Import ListNotations.

Theorem refutation : negation.
Proof. intro H. specialize (H [1] [2]). discriminate H. Qed.
