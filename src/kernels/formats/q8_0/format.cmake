ds_kernel_sources(generic q8_0_format.cpp)
