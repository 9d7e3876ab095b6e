ds_kernel_sources(reference q4_k.cpp scale_min_quantize.cpp)
ds_kernel_sources(avx512_vnni matmul_q4_k_avx512.cpp)
ds_kernel_sources(amx matmul_q4_k_amx.cpp)
ds_kernel_sources(avx2 matmul_q4_k_avx2.cpp)
