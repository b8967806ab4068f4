"""JAX kernels: hand-written primitives (`primitives`) and the runtime the generated kernel
modules use (`runtime`)."""
