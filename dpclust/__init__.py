"""dpclust: the compendium's tooling around the algorithms of ``dpclust_lib``.

It depends on ``dpclust_lib`` and never the other way. Modules (imported on demand):

``datasets``        the data sets: one module per paper (its files, their readers, its preprocessing)
                    on a shared registry that finds, checks and downloads the files
``experiments``     profiles, seeded sweeps, result tables, verdict rules, reproduction ledgers
``birch_readings``  notebook 05's sweeps over the readings of DPBIRCH
``plotting``        the compendium's figures (needs the ``notebooks`` extra)
``reproduce``       papermill batch runs of the notebooks; ``verify`` compares their tables
``environment``     the locked against the installed versions
``exercises``       the notebooks' exercise checkers, one module per notebook
``assignments``     student versions of the notebooks; ``grade`` grades them
``__main__``        the ``dpclust`` command line (``python -m dpclust``)
"""

__version__ = "0.2.0"
