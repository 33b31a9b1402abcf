From TCSExam Require Import Task.
Require Import Arith.

Theorem proof : statement.
Proof.
  intro n. induction n as [|n IH]; [reflexivity|].
  simpl sum_cubes. rewrite Nat.mul_add_distr_l, IH. ring.
Qed.
