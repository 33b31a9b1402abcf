From TCSExam Require Import Task.
(* refuted: n = 40 gives 1681 = 41 * 41 *)
Theorem refutation : negation.
Proof.
  intro H. destruct (H 40) as [_ Hd].
  destruct (Hd 41) as [E|E].
  - exists 41. reflexivity.
  - discriminate E.
  - vm_compute in E. discriminate E.
Qed.
