"""Who owns a run and what it leaves: the owner token of every harness process and the run marker
its runs carry (`owner`), and the scratch folders named by that token (`scratch`), so that a
clean-up after a dead owner never touches another job's runs."""
