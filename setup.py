"""The one thing pyproject.toml cannot declare: dmlspec's optional C extension.

dmlspec.kernels._aligned, a 64-byte aligned NumPy allocator (dmlspec.kernels.host says why),
is optional: where no C compiler is found the install goes on without it and NumPy inputs are
passed as before (windows, copies)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("dmlspec.kernels._aligned", ["dmlspec/kernels/_aligned.c"], optional=True),
    ]
)
