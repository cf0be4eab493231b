"""Helpers shared by the test folders: projects for pytester, golden sets, an audit scenario,
a Chromium driver, and the libraries loaded before any in-process pytester run (``preload``)."""
