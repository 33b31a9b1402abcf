from tcsexam.cli import main

raise SystemExit(main())
