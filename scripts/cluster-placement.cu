// cluster-placement.cu - where the blocks of a clustered launch land: for
// clusters of 16 and 8 blocks of 128 threads, 128 blocks in all, at three
// dynamic shared-memory sizes (so that 1, 2 or 3 blocks fit an SM) and
// the three cluster scheduling policies (0 default, 1 spread, 2 load
// balancing), the runtime's cudaOccupancyMaxActiveClusters, how many
// distinct SMs (%smid) the blocks ran on, and how many started a wave late
// (each block spins 30 us, so a block that waits for a free SM starts
// later). The decode Attention's cluster merge needs every chunk of a kv
// head in one cluster; BENCHMARKS.md round 18 has the H200's answers.
//   nvcc -O2 -arch=sm_90 -o cluster-placement scripts/cluster-placement.cu
//   ./cluster-placement
#include <cstdio>
#include <cuda_runtime.h>
#include <set>
#include <vector>

// Records the block's SM and start time, then holds the SM for 30 us.
__global__ void probe(unsigned *out, unsigned long long *t0)
{
    extern __shared__ char s[];
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (threadIdx.x == 0) {
        s[0] = 1;
        out[blockIdx.x] = smid;
        t0[blockIdx.x] = t;
    }
    unsigned long long e = t;
    while (e - t < 30000)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(e));
}

// Every (cluster size, shared memory, policy): the occupancy answer and the
// placement of one launch of 128 blocks.
int main()
{
    unsigned *d;
    unsigned long long *dt;
    cudaMalloc(&d, 4096 * 4);
    cudaMalloc(&dt, 4096 * 8);
    cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    for (int cs : {16, 8})
        for (int smem : {104 * 1024 + 512, 139264, 70 * 1024})
            for (int pol = 0; pol < 3; pol++) {
                cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
                const int nb = 128;
                cudaLaunchAttribute a[2];
                a[0].id = cudaLaunchAttributeClusterDimension;
                a[0].val.clusterDim.x = cs;
                a[0].val.clusterDim.y = 1;
                a[0].val.clusterDim.z = 1;
                a[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
                a[1].val.clusterSchedulingPolicyPreference = (cudaClusterSchedulingPolicy)pol;
                cudaLaunchConfig_t c = {};
                c.gridDim = dim3(nb);
                c.blockDim = dim3(128);
                c.dynamicSmemBytes = smem;
                c.attrs = a;
                c.numAttrs = 2;
                int ncl = -1;
                cudaError_t eo = cudaOccupancyMaxActiveClusters(&ncl, probe, &c);
                cudaError_t e = cudaLaunchKernelEx(&c, probe, d, dt);
                cudaError_t e2 = cudaDeviceSynchronize();
                std::vector<unsigned> h(nb);
                std::vector<unsigned long long> ht(nb);
                cudaMemcpy(h.data(), d, nb * 4, cudaMemcpyDeviceToHost);
                cudaMemcpy(ht.data(), dt, nb * 8, cudaMemcpyDeviceToHost);
                std::set<unsigned> sms(h.begin(), h.end());
                unsigned long long mn = ~0ull, mx = 0;
                for (auto x : ht) {
                    mn = x < mn ? x : mn;
                    mx = x > mx ? x : mx;
                }
                int late = 0;
                for (auto x : ht)
                    late += x - mn > 15000;
                printf("cluster %2d smem %6d policy %d: occ %d (%s) launch %s %s: %zu distinct SMs of %d blocks, %d "
                       "started late, spread of starts %llu ns\n",
                       cs, smem, pol, ncl, cudaGetErrorString(eo), cudaGetErrorString(e), cudaGetErrorString(e2),
                       sms.size(), nb, late, mx - mn);
            }
    return 0;
}
