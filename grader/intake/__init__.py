"""From a hand-in to the files graded: collect, choose, extract (notebooks, .py), safe unzip."""
