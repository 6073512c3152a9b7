/** tr46 ships no types: the one function chainmail calls (UTS-46 ToASCII), as its README documents it. */
declare module "tr46" {
  export function toASCII(
    domainName: string,
    options?: {
      checkHyphens?: boolean;
      checkBidi?: boolean;
      checkJoiners?: boolean;
      useSTD3ASCIIRules?: boolean;
      verifyDNSLength?: boolean;
      transitionalProcessing?: boolean;
      ignoreInvalidPunycode?: boolean;
    },
  ): string | null;
}
