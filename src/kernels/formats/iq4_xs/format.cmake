ds_kernel_sources(reference iq4_xs.cpp)
ds_kernel_sources(avx512_vnni matmul_iq4_xs_avx512.cpp)
ds_kernel_sources(amx matmul_iq4_xs_amx.cpp)
ds_kernel_sources(avx2 matmul_iq4_xs_avx2.cpp)
