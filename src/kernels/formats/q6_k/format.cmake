ds_kernel_sources(reference q6_k.cpp)
ds_kernel_sources(avx512_vnni matmul_q6_k_avx512.cpp)
ds_kernel_sources(amx matmul_q6_k_amx.cpp)
ds_kernel_sources(avx2 matmul_q6_k_avx2.cpp)
