From TCSExam Require Import Task.
Require Import Lia.

Theorem even_or_odd : statement.
Proof.
  intro n. induction n as [|n [k [E|E]]].
  - exists 0. left. reflexivity.
  - exists k. right. lia.
  - exists (S k). left. lia.
Qed.
