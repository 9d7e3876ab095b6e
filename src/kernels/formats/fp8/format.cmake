ds_kernel_sources(reference e4m3.cpp fp8_format.cpp fp8_quantize.cpp)
ds_kernel_sources(generic fp8_blocks_format.cpp fp8_panels_format.cpp)
ds_kernel_sources(avx512_vbmi matmul_fp8_panels_avx512.cpp)
ds_kernel_sources(avx2 matmul_fp8_panels_avx2.cpp)
