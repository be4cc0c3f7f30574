"""Course machinery: build notebooks, probe and judge submissions, grade a class."""
