"""Kernels and plans: the BMU search and neighbourhood sums the JAX implementations share, the kernel plan chosen per
device and shape, on-device quality and projection, schedules on the device, sharding layouts as arithmetic."""
