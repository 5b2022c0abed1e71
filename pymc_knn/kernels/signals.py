"""Ctrl-C inside numba loops: :func:`check_signals` runs Python's pending signal handlers.

Python runs a signal's handler only between bytecodes, so a numba loop that runs for minutes
ignores Ctrl-C until it returns. :func:`check_signals` calls the C API's ``PyErr_CheckSignals``,
which costs a few nanoseconds when no signal is pending (a flag check). When a handler raises
(``KeyboardInterrupt`` for Ctrl-C), the jitted function returns at once with that exception set,
and every jitted caller passes it on, as they do numba's own exceptions; a handler that returns
normally lets the loop go on. The symbol is resolved by name when the code is loaded, so
``cache=True`` works.

Call it once per sweep or iteration of a long sequential loop, with the GIL held (the default;
never inside ``prange`` or ``nogil`` code, whose threads have no Python thread state). Arrays
allocated by the interrupted call are not freed, as with numba's own exceptions.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["check_signals"]


def check_signals():
    """Run pending Python signal handlers; their exception propagates.

    A no-op when called from Python (which runs the handlers itself), so code using it also runs
    with ``NUMBA_DISABLE_JIT=1``.
    """


@intrinsic
def _py_err_check_signals(typingctx):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "PyErr_CheckSignals")
        raised = builder.icmp_signed("!=", builder.call(fn, []), ir.Constant(ir.IntType(32), 0))
        with cgutils.if_unlikely(builder, raised):
            # the handler's exception is already set: return "Python exception raised"
            context.call_conv.return_exc(builder)
        return context.get_dummy_value()

    return types.none(), codegen


@overload(check_signals)
def _check_signals_jit():
    return lambda: _py_err_check_signals()
