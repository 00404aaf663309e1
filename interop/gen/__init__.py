"""The conformance-case generator, split by concern:

* :mod:`interop.gen.scenarios`: the recorded matches (a :class:`Scenario` each);
* :mod:`interop.gen.policy`: the bot that plays them;
* :mod:`interop.gen.forge`: building a case (:func:`add`) and re-signed records;
* :mod:`interop.gen.groups`: one module per case group, registered in ``groups.GROUPS``;
* :mod:`interop.gen.output`: judging each case with the reference adapter and writing the files.

``python -m interop.generate`` runs them all.
"""
