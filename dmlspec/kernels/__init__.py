"""JAX kernels: hand-written primitives (`primitives`) and the runtime the generated kernel
modules use (`runtime`), a package of one job per module:

- `runtime.call`: `call_kernel`, the call path (a call's key, its program, its arguments);
- `runtime.run`: `run_operator`, the backend contract (operator JSON, NumPy inputs and outputs);
- `runtime.desc`: a call's desc, and its plan, validated once per distinct desc;
- `runtime.program`: the primitive jitted with its static parameters, layouts and donated
  buffers, XLA's options by program size, calls with 64-bit types;
- `runtime.cache`: cache limits and keys, the compiled programs kept, JAX's compilation cache
  folder;
- `runtime.table`: `KernelTable`, what a generated kernel module declares, and a desc's plan.
"""
