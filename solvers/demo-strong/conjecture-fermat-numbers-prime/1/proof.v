From TCSExam Require Import Task.
Require Import Coq.NArith.NArith.
Open Scope N_scope.

(* refuted (Euler): 2^32 + 1 = 641 * 6700417 *)
Theorem refutation : negation.
Proof.
  intro H. destruct (H 5) as [_ Hd].
  destruct (Hd 641) as [E|E].
  - exists 6700417. vm_compute. reflexivity.
  - discriminate E.
  - vm_compute in E. discriminate E.
Qed.
